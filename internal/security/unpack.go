package security

import (
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
)

// A secret is just as out once compressed or encoded: a worker that gzips
// a key, zips it or hides a gzip in a base64 block gets it past rules that
// read text. Unpack opens those common forms (gzip, zlib, bzip2, zip and
// base64 blocks holding any of them, nested a few deep) so that the same
// checks read what is inside, within a bound: what a compressed blob
// expands to is attacker-chosen.

// Bounds of Unpack.
const (
	// MaxUnpackBytes bounds what one blob expands to, over every form and
	// level together.
	MaxUnpackBytes = 16 << 20
	// maxUnpackDepth bounds nesting (a base64 block of a gzip of a zip).
	maxUnpackDepth = 3
	// maxZipEntries bounds the entries of one zip archive read.
	maxZipEntries = 1000
)

// Unpacked is content found inside a blob.
type Unpacked struct {
	What string // how it was found: "gzip", "zip entry a/b.txt", "base64 block at byte 120 → gzip"
	Data []byte
}

// base64Block is a run long enough to hold a key once encoded.
var base64Block = regexp.MustCompile(`[A-Za-z0-9+/_\-]{40,}={0,2}`)

// Unpack returns what the blob holds in the forms above, each level of
// nesting as an entry of its own, at most MaxUnpackBytes in all. Text a
// base64 block decodes to is left to the rules (gitleaks decodes base64
// itself); a block is opened when it holds one of the compressed forms.
func Unpack(data []byte) []Unpacked {
	u := &unpacker{budget: MaxUnpackBytes}
	u.walk(data, "", 0)
	return u.out
}

type unpacker struct {
	budget int64
	out    []Unpacked
}

func (u *unpacker) walk(data []byte, prefix string, depth int) {
	if depth >= maxUnpackDepth || u.budget <= 0 {
		return
	}
	add := func(what string, inner []byte) {
		if len(inner) == 0 {
			return
		}
		what = prefix + what
		u.out = append(u.out, Unpacked{What: what, Data: inner})
		u.walk(inner, what+" → ", depth+1)
	}
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		if r, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			r.Multistream(true)
			add("gzip", u.read(r))
		}
	case len(data) > 2 && data[0] == 0x78 && (uint16(data[0])<<8|uint16(data[1]))%31 == 0:
		if r, err := zlib.NewReader(bytes.NewReader(data)); err == nil {
			add("zlib", u.read(r))
		}
	case bytes.HasPrefix(data, []byte("BZh")):
		add("bzip2", u.read(bzip2.NewReader(bytes.NewReader(data))))
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for i, f := range zr.File {
			if i >= maxZipEntries || u.budget <= 0 {
				break
			}
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				continue
			}
			inner := u.read(rc)
			_ = rc.Close() // opened to read
			add("zip entry "+clipName(f.Name), inner)
		}
	default:
		for _, loc := range base64Block.FindAllIndex(data, 64) {
			block := data[loc[0]:loc[1]]
			dec := decodeBase64(block)
			if len(dec) == 0 || !compressed(dec) {
				continue
			}
			u.budget -= int64(len(dec))
			u.walk(dec, prefix+fmt.Sprintf("base64 block at byte %d → ", loc[0]), depth)
		}
	}
}

// read reads r within the remaining budget.
func (u *unpacker) read(r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, u.budget))
	u.budget -= int64(len(b))
	return b
}

// compressed reports whether data starts like one of the forms Unpack opens.
func compressed(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0x1f, 0x8b}) || bytes.HasPrefix(data, []byte("BZh")) ||
		bytes.HasPrefix(data, []byte("PK\x03\x04")) ||
		len(data) > 2 && data[0] == 0x78 && (uint16(data[0])<<8|uint16(data[1]))%31 == 0
}

func decodeBase64(block []byte) []byte {
	s := string(bytes.TrimRight(block, "="))
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b
		}
	}
	return nil
}

func clipName(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
