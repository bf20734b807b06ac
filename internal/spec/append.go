package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// AppendTasks returns the graph document data with tasks (each encoded as
// JSON) added at the end of its "tasks" array, the rest of the bytes as
// they were: a person's formatting and the fields zerg does not know
// survive, and the diff of the file is the added tasks alone. The new
// tasks are indented like the first one.
func AppendTasks(data []byte, tasks ...any) ([]byte, error) {
	open, closing, err := tasksArray(data)
	if err != nil {
		return nil, err
	}
	// The whitespace before the first task is the separator to repeat.
	sep := "\n    "
	if i := bytes.IndexFunc(data[open+1:], func(r rune) bool { return r != ' ' && r != '\t' && r != '\n' && r != '\r' }); i > 0 {
		sep = string(data[open+1 : open+1+i])
	}
	indent := sep[bytes.LastIndexByte([]byte(sep), '\n')+1:]
	last := bytes.LastIndexFunc(data[:closing], func(r rune) bool { return r != ' ' && r != '\t' && r != '\n' && r != '\r' })
	var add bytes.Buffer
	for i, t := range tasks {
		b, err := json.MarshalIndent(t, indent, "  ")
		if err != nil {
			return nil, err
		}
		if i > 0 || last != open {
			add.WriteByte(',')
		}
		add.WriteString(sep)
		add.Write(b)
	}
	out := make([]byte, 0, len(data)+add.Len())
	out = append(out, data[:last+1]...)
	out = append(out, add.Bytes()...)
	return append(out, data[last+1:]...), nil
}

// tasksArray finds the offsets of the '[' and ']' of the top-level
// "tasks" array of a graph document.
func tasksArray(data []byte) (open, closing int, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, 0, errors.New("the task graph is not a JSON object")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, 0, err
		}
		if key != "tasks" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, 0, err
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return 0, 0, errors.New(`"tasks" is not an array`)
		}
		open = int(dec.InputOffset()) - 1
		for dec.More() {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, 0, err
			}
		}
		if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		return open, int(dec.InputOffset()) - 1, nil
	}
	return 0, 0, fmt.Errorf(`the task graph has no "tasks" array`)
}
