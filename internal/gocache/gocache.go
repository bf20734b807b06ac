// Package gocache is a Go build cache in layers, served to the go command
// through GOCACHEPROG: lookups go to a writable directory of zerg's and
// then to read-only directories (the user's own GOCACHE), and everything
// the go command stores goes to the writable one. So a sandboxed worker
// starts with the user's warm cache, keeps its own builds from one attempt
// to the next, and never writes the user's cache.
//
// Every directory has the layout of the go command's own cache (see
// cmd/go/internal/cache): <hh>/<hex action id>-a holds the entry
// "v1 <hex action id> <hex output id> <size> <unix nanos>\n", and
// <hh>/<hex output id>-d the output, hh being the id's first byte in hex.
package gocache

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/fsx"
)

// Command is the hidden zerg command that serves the protocol.
const Command = "go-cache"

// Flag names of Command.
const (
	FlagWrite = "write"
	FlagRead  = "read"
)

// Layers are the cache's directories.
type Layers struct {
	Write string   // stores go here, and lookups start here
	Read  []string // then lookups try these, in order; never written
}

// Prog is the GOCACHEPROG value that runs zerg (at exe) on l. Paths with
// spaces are quoted the way the go command splits the value.
func (l Layers) Prog(exe string) string {
	q := func(s string) string {
		if strings.ContainsAny(s, " \t'\"") {
			return "'" + s + "'"
		}
		return s
	}
	parts := []string{q(exe), Command, "--" + FlagWrite, q(l.Write)}
	for _, r := range l.Read {
		parts = append(parts, "--"+FlagRead, q(r))
	}
	return strings.Join(parts, " ")
}

// request and response are the protocol's messages (cmd/go/internal/cacheprog).
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// idSize is the length of action and output ids (SHA-256).
const idSize = 32

// Stats counts what a Serve answered, for tests and benchmarks.
type Stats struct {
	Gets, Hits, ReadHits, Puts int
}

// Serve speaks the protocol on r and w until the go command closes it.
func Serve(l Layers, r io.Reader, w io.Writer) (Stats, error) {
	var st Stats
	if !filepath.IsAbs(l.Write) {
		return st, fmt.Errorf("the writable cache %q is not an absolute path", l.Write)
	}
	if err := os.MkdirAll(l.Write, 0o777); err != nil {
		return st, err
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	send := func(resp response) error {
		if err := enc.Encode(resp); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := send(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return st, err
	}
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return st, nil
			}
			return st, fmt.Errorf("read a request: %w", err)
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				return st, fmt.Errorf("read the body of request %d: %w", req.ID, err)
			}
		}
		resp := response{ID: req.ID}
		switch req.Command {
		case "get":
			st.Gets++
			if e, layer, ok := l.get(req.ActionID); ok {
				st.Hits++
				if layer > 0 {
					st.ReadHits++
				}
				t := e.time
				resp.OutputID, resp.Size, resp.Time, resp.DiskPath = e.out, e.size, &t, e.path
			} else {
				resp.Miss = true
			}
		case "put":
			st.Puts++
			path, err := l.put(req.ActionID, req.OutputID, body, req.BodySize)
			if err != nil {
				resp.Err = err.Error()
			}
			resp.DiskPath = path
		case "close":
			return st, send(resp)
		default:
			resp.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := send(resp); err != nil {
			return st, err
		}
	}
}

type entry struct {
	out  []byte
	size int64
	time time.Time
	path string
}

func fileName(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

// get finds actionID in the layers: the entry, the index of its layer
// (0: the writable one) and whether it was found with its output whole.
func (l Layers) get(actionID []byte) (entry, int, bool) {
	if len(actionID) != idSize {
		return entry{}, 0, false
	}
	for i, dir := range append([]string{l.Write}, l.Read...) {
		if e, ok := lookup(dir, actionID); ok {
			return e, i, true
		}
	}
	return entry{}, 0, false
}

func lookup(dir string, actionID []byte) (entry, bool) {
	data, err := os.ReadFile(fileName(dir, actionID, "a"))
	if err != nil {
		return entry{}, false
	}
	f := strings.Fields(string(data))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(actionID) {
		return entry{}, false
	}
	out, err := hex.DecodeString(f[2])
	if err != nil || len(out) != idSize {
		return entry{}, false
	}
	size, err1 := strconv.ParseInt(f[3], 10, 64)
	nanos, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return entry{}, false
	}
	path := fileName(dir, out, "d")
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return entry{}, false
	}
	return entry{out: out, size: size, time: time.Unix(0, nanos), path: path}, true
}

// put stores the output and then the entry that names it, each written
// to a temporary file and renamed, so a reader never sees half of one.
func (l Layers) put(actionID, outputID, body []byte, size int64) (string, error) {
	if len(actionID) != idSize || len(outputID) != idSize {
		return "", errors.New("put: action and output ids must be 32 bytes")
	}
	if int64(len(body)) != size {
		return "", fmt.Errorf("put: body of %d bytes, announced %d", len(body), size)
	}
	out := fileName(l.Write, outputID, "d")
	if err := writeFile(out, body); err != nil {
		return "", err
	}
	e := fmt.Sprintf("v1 %x %x %20d %20d\n", actionID, outputID, size, time.Now().UnixNano())
	if err := writeFile(fileName(l.Write, actionID, "a"), []byte(e)); err != nil {
		return "", err
	}
	return out, nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	return fsx.WriteCacheFile(path, data, 0o644)
}
