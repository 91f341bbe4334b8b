package examples

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pluginyard/registry/pack"
)

// Ed25519Example is the example the demo signs with its own ed25519 key (generated at the
// first start, kept in the data directory), to show a key-signed release.
const Ed25519Example = "hello-managed"

// PackSigned writes the package of the example name as Pack does, with checksums.txt.sig
// added right after checksums.txt: the base64 ed25519 signature by key of the exact
// checksums.txt bytes, which is what a publisher's signing step adds after `registry pack`.
// ed25519 signatures are deterministic, so one key always gives the same bytes.
func PackSigned(name string, key ed25519.PrivateKey, w io.Writer) error {
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("examples: sign %s: the ed25519 private key is %d bytes, want %d", name, len(key), ed25519.PrivateKeySize)
	}
	var plain bytes.Buffer
	if err := Pack(name, &plain); err != nil {
		return err
	}
	if err := addSignature(plain.Bytes(), key, w); err != nil {
		return fmt.Errorf("examples: sign %s: %w", name, err)
	}
	return nil
}

// addSignature copies the entries of pkg into a new archive with pack's gzip settings and
// inserts checksums.txt.sig after checksums.txt.
func addSignature(pkg []byte, key ed25519.PrivateKey, w io.Writer) error {
	zr, err := gzip.NewReader(bytes.NewReader(pkg))
	if err != nil {
		return fmt.Errorf("read package: %w", err)
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.OS = 255 // as pack writes it: "unknown", nothing varies by host
	tw := tar.NewWriter(zw)
	signed := false
	for tr := tar.NewReader(zr); ; {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read package: %w", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return fmt.Errorf("read %s: %w", h.Name, err)
		}
		if err := writeEntry(tw, h, data); err != nil {
			return err
		}
		if h.Name == pack.ChecksumsFile {
			sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, data)) + "\n"
			sigHdr := &tar.Header{Typeflag: tar.TypeReg, Name: pack.ChecksumsSigFile, Mode: pack.FileMode, ModTime: time.Unix(pack.EpochUnix, 0)}
			if err := writeEntry(tw, sigHdr, []byte(sig)); err != nil {
				return err
			}
			signed = true
		}
	}
	if !signed {
		return fmt.Errorf("the package has no %s to sign", pack.ChecksumsFile)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func writeEntry(tw *tar.Writer, h *tar.Header, data []byte) error {
	h.Size = int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar header %s: %w", h.Name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", h.Name, err)
	}
	return nil
}
