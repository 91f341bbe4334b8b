package verify_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// entry is one tar entry for buildTarGz. The zero Type is a regular file.
type entry struct {
	Name    string
	Body    string
	Type    byte
	Link    string
	Size    int64             // header size when non-zero (a lie the reader must survive)
	RawName string            // bytes to patch over Name in the header (for names tar.Writer refuses)
	RawType byte              // typeflag to patch into the header (for types tar.Writer refuses)
	PAX     map[string]string // extra PAX records
	Format  tar.Format        // header format when set (e.g. tar.FormatGNU)
	Patch   map[int]string    // bytes to write at offsets of the header block (checksum fixed)
}

func file(name, body string) entry { return entry{Name: name, Body: body} }

func dir(name string) entry { return entry{Name: name, Type: tar.TypeDir} }

// buildTar writes entries as an uncompressed tar stream.
func buildTar(tb testing.TB, entries []entry) []byte {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := tw.Flush(); err != nil && e.Size == 0 {
			tb.Fatalf("tar flush: %v", err)
		}
		start := buf.Len()
		hdr := header(e)
		if err := tw.WriteHeader(hdr); err != nil {
			tb.Fatalf("tar header %q: %v", e.Name, err)
		}
		if e.RawName != "" || e.RawType != 0 || e.Patch != nil {
			block := buf.Bytes()[buf.Len()-512:]
			if e.RawName != "" || e.RawType != 0 {
				block = buf.Bytes()[start : start+512]
			}
			for at, b := range e.Patch {
				copy(block[at:], b)
			}
			patchHeader(tb, block, e.RawName, e.RawType)
		}
		if e.Type == tar.TypeReg || e.Type == 0 {
			if _, err := io.WriteString(tw, e.Body); err != nil && e.Size == 0 {
				tb.Fatalf("tar body %q: %v", e.Name, err)
			}
		}
	}
	if err := tw.Close(); err != nil && !strings.Contains(err.Error(), "missed writing") {
		tb.Fatalf("tar close: %v", err)
	}
	return buf.Bytes()
}

func header(e entry) *tar.Header {
	hdr := &tar.Header{Name: e.Name, Typeflag: e.Type, Linkname: e.Link, Mode: 0o644, Size: int64(len(e.Body)), Format: tar.FormatPAX, PAXRecords: e.PAX}
	if hdr.Typeflag == 0 {
		hdr.Typeflag = tar.TypeReg
	}
	if e.Size != 0 {
		hdr.Size = e.Size
	}
	if hdr.Typeflag != tar.TypeReg {
		hdr.Size = 0
		hdr.Mode = 0o755
	}
	if len(e.PAX) == 0 {
		hdr.Format = tar.FormatUnknown
	}
	if e.Format != tar.FormatUnknown {
		hdr.Format = e.Format
	}
	if e.Type == tar.TypeXGlobalHeader {
		return &tar.Header{Typeflag: e.Type, PAXRecords: e.PAX}
	}
	return hdr
}

// patchHeader overwrites the name field and the typeflag of a USTAR header block (when
// set) and fixes its checksum.
func patchHeader(tb testing.TB, block []byte, name string, typ byte) {
	tb.Helper()
	if len(name) > 100 {
		tb.Fatalf("raw name %q too long", name)
	}
	if name != "" {
		clear(block[0:100])
		copy(block[0:100], name)
	}
	if typ != 0 {
		block[156] = typ
	}
	copy(block[148:156], "        ")
	var sum int64
	for _, c := range block {
		sum += int64(c)
	}
	copy(block[148:156], fmt.Sprintf("%06o\x00 ", sum))
}

func gz(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func buildTarGz(tb testing.TB, entries []entry) []byte {
	tb.Helper()
	return gz(tb, buildTar(tb, entries))
}

// withChecksums returns files plus a correct checksums.txt for them (base prefix
// stripped), as the pack tool writes it.
func withChecksums(base string, files ...entry) []entry {
	var lines []string
	for _, f := range files {
		if f.Type != 0 && f.Type != tar.TypeReg {
			continue
		}
		sum := sha256.Sum256([]byte(f.Body))
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+strings.TrimPrefix(f.Name, base)+"\n")
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return append(files, file(base+"checksums.txt", strings.Join(lines, "")))
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// pngIcon is a small valid PNG.
func pngIcon(tb testing.TB) string {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range 8 {
		img.Set(i, i, color.RGBA{R: 200, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// sparseEntries is a PAX (GNU 1.0) sparse file named name: a PAX header written by hand,
// since tar.Writer drops GNU.sparse records, then the data with its sparse map.
func sparseEntries(name string) []entry {
	var records string
	for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", name}, {"GNU.sparse.realsize", "1048576"}} {
		rec := " " + kv[0] + "=" + kv[1] + "\n"
		n := len(rec) + 1
		for len(fmt.Sprint(n))+len(rec) != n {
			n++
		}
		records += fmt.Sprint(n) + rec
	}
	sparseMap := "1\n1048575\n1\n"
	data := sparseMap + strings.Repeat("\x00", 512-len(sparseMap)) + "x"
	return []entry{
		{Name: "PaxHeaders/" + name, Body: records, RawType: tar.TypeXHeader},
		{Name: "GNUSparseFile.0/" + name, Body: data},
	}
}
