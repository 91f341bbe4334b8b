package pack

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
)

// Sign copies the entries of the packed package pkg into a new archive with Pack's gzip
// settings and inserts checksums.txt.sig right after checksums.txt: the base64 ed25519
// signature by key of the exact checksums.txt bytes, which is what a publisher's signing
// step adds after `registry pack`.
func Sign(pkg []byte, key ed25519.PrivateKey, w io.Writer) error {
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
		if err := writeSignedEntry(tw, h, data); err != nil {
			return err
		}
		if h.Name == ChecksumsFile {
			sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, data)) + "\n"
			sigHdr := &tar.Header{Typeflag: tar.TypeReg, Name: ChecksumsSigFile, Mode: FileMode, ModTime: time.Unix(EpochUnix, 0)}
			if err := writeSignedEntry(tw, sigHdr, []byte(sig)); err != nil {
				return err
			}
			signed = true
		}
	}
	if !signed {
		return fmt.Errorf("the package has no %s to sign", ChecksumsFile)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func writeSignedEntry(tw *tar.Writer, h *tar.Header, data []byte) error {
	h.Size = int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar header %s: %w", h.Name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", h.Name, err)
	}
	return nil
}
