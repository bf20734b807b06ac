package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/zergrush/zerg/internal/textx"
)

// MaxFileSize bounds the config file; a real one is a few kilobytes.
const MaxFileSize = 1 << 20

// Load reads the config file at path: defaults overlaid by the file, then
// checked. Any problem, in decoding or validation, is reported in an *Error
// naming path, the line and the option. A missing file is an error wrapping
// fs.ErrNotExist, so callers can tell it apart.
func Load(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return Config{}, fmt.Errorf("read config %s: %w", path, err)
	}
	return Parse(data, path)
}

// Parse decodes config YAML; name is the file name used in messages. Unknown
// options, wrong types and failed checks are all reported together.
func Parse(data []byte, name string) (Config, error) {
	cfg := Default()
	d := decoder{file: name, lines: map[string]int{}}
	if len(data) > MaxFileSize {
		d.problem(0, "", CodeTooLarge, fmt.Sprintf("the file is larger than %d bytes; a config is a few kilobytes, check it is the right file", MaxFileSize))
		return Config{}, &Error{Problems: d.problems}
	}
	root, err := parseDocument(data)
	if err != nil {
		line, msg := yamlErrorLine(err)
		d.problem(line, "", CodeInvalidYAML, "invalid YAML: "+msg+"; fix the syntax (indent with spaces, quote values containing ': ' or '#')")
		return Config{}, &Error{Problems: d.problems}
	}
	if root != nil {
		d.value(root, reflect.ValueOf(&cfg).Elem(), "")
	}
	decodeProblems := len(d.problems)
	for _, p := range cfg.problems() {
		// A value that failed to decode kept its default or zero value; a
		// check on it would only repeat the first problem less clearly.
		if !d.reported(p.Field, decodeProblems) {
			d.problem(d.lineOf(p.Field), p.Field, p.Code, p.Message)
		}
	}
	if len(d.problems) > 0 {
		sortProblems(d.problems)
		return Config{}, &Error{Problems: d.problems}
	}
	cfg.clearUnavailable()
	return cfg, nil
}

// positions returns the line of every option set in data, keyed by path; tests
// use it to prove the template spells out every option.
func positions(data []byte) (map[string]int, error) {
	cfg := Default()
	d := decoder{lines: map[string]int{}}
	root, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	if root != nil {
		d.value(root, reflect.ValueOf(&cfg).Elem(), "")
	}
	if len(d.problems) > 0 {
		return nil, &Error{Problems: d.problems}
	}
	return d.lines, nil
}

// errMultiDoc rejects files with more than one YAML document.
var errMultiDoc = errors.New("only one YAML document is allowed; remove the '---' separator and what follows")

// parseDocument returns the top node of the single document in data, or nil
// for an empty file (or one with only comments).
func parseDocument(data []byte) (n *yaml.Node, err error) {
	// The YAML parser is third-party code fed with user input: a panic in it
	// must become an error message, not a crash.
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("cannot parse the file (%v)", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, lineError{line: next.Line, err: errMultiDoc}
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}

type lineError struct {
	line int
	err  error
}

func (e lineError) Error() string { return e.err.Error() }

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlErrorLine splits a parser error into its line and message.
func yamlErrorLine(err error) (int, string) {
	var le lineError
	if errors.As(err, &le) {
		return le.line, le.err.Error()
	}
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	// yaml.v3 reports parser (not scanner) errors with a 0-based line and
	// leaves the line out when it is 0; its scanner errors are 1-based.
	for _, p := range yamlParserErrors {
		if strings.HasPrefix(msg, p) {
			line++
			break
		}
	}
	return line, msg
}

// yamlParserErrors are the openings of yaml.v3's parser error messages.
var yamlParserErrors = []string{
	"did not find expected",
	"found duplicate %",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// decoder overlays a YAML node tree onto a Config by reflection on the yaml
// tags. It is strict (unknown or repeated options are errors) and, unlike
// yaml's own decoder, it knows the option path of every value, so messages
// can say "breaker.cooldown" instead of a Go type name.
type decoder struct {
	file     string
	problems []Problem
	lines    map[string]int // option path -> line of its value
}

func (d *decoder) problem(line int, path, code, msg string) {
	// Parser messages may quote the input; keep every problem on one line.
	msg = strings.Join(strings.Fields(msg), " ")
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Field: path, Code: code, Message: msg})
}

// reported says whether one of the first n problems is about path or a parent of it.
func (d *decoder) reported(path string, n int) bool {
	for _, p := range d.problems[:n] {
		if p.Field == path || strings.HasPrefix(path, p.Field+".") || strings.HasPrefix(path, p.Field+"[") {
			return true
		}
	}
	return false
}

// lineOf finds the line of path or, failing that, of its closest parent, so a
// cross-field problem still points near the right place.
func (d *decoder) lineOf(path string) int {
	for path != "" {
		if l, ok := d.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	plainKeyRE   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// maxAliasDepth stops alias chains; aliases are resolved, never expanded.
const maxAliasDepth = 16

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliasDepth; i++ {
		n = n.Alias
	}
	return n
}

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	if n == nil || n.Kind == yaml.AliasNode {
		d.problem(0, path, CodeInvalidYAML, "alias chain too deep; write the value out")
		return
	}
	d.lines[path] = n.Line
	// An empty value ("cooldown:" with nothing after it) keeps the default.
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return
	}
	switch {
	case v.Type() == durationType:
		d.duration(n, v, path)
	case v.Kind() == reflect.Struct:
		d.mapping(n, v, path)
	case v.Kind() == reflect.Slice:
		d.sequence(n, v, path)
	case v.Kind() == reflect.String:
		if s, ok := d.scalar(n, path, "a text value"); ok {
			v.SetString(s)
		}
	case v.Kind() == reflect.Int:
		d.integer(n, v, path)
	case v.Kind() == reflect.Float64:
		d.float(n, v, path)
	case v.Kind() == reflect.Bool:
		d.boolean(n, v, path)
	default:
		panic("config: no decoder for " + v.Type().String())
	}
}

// scalar returns the text of a scalar node or reports what was found instead.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.problem(n.Line, path, CodeType, fmt.Sprintf("expected %s, found %s", want, kindName(n)))
		return "", false
	}
	return n.Value, true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping (key: value lines)"
	case yaml.SequenceNode:
		return "a list"
	default:
		return "a single value"
	}
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a duration like 60s")
	if !ok {
		return
	}
	dur, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		d.problem(n.Line, path, CodeType, fmt.Sprintf("%s is not a duration; write it like 60s, 5m or 1h30m", quote(s)))
		return
	}
	v.SetInt(int64(dur))
}

func (d *decoder) integer(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a whole number")
	if !ok {
		return
	}
	var i int
	if n.ShortTag() != "!!int" || n.Decode(&i) != nil {
		d.problem(n.Line, path, CodeType, fmt.Sprintf("%s is not a whole number; write it like 4", quote(s)))
		return
	}
	v.SetInt(int64(i))
}

func (d *decoder) float(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a number")
	if !ok {
		return
	}
	var f float64
	tag := n.ShortTag()
	if (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
		d.problem(n.Line, path, CodeType, fmt.Sprintf("%s is not a number; write it like 2.5", quote(s)))
		return
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.problem(n.Line, path, CodeBadValue, fmt.Sprintf("%s is not a finite number; write it like 2.5", quote(s)))
		return
	}
	v.SetFloat(f)
}

func (d *decoder) boolean(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "true or false")
	if !ok {
		return
	}
	var b bool
	if n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		d.problem(n.Line, path, CodeType, fmt.Sprintf("%s is not true or false; write true or false", quote(s)))
		return
	}
	v.SetBool(b)
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.problem(n.Line, path, CodeType, fmt.Sprintf("expected a list, found %s; write it like [a, b] or one '- item' per line", kindName(n)))
		return
	}
	out := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		elem := reflect.New(v.Type().Elem())
		if dft, ok := elem.Interface().(interface{ defaults() }); ok {
			dft.defaults()
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		if it := resolve(item); it != nil && it.Kind == yaml.ScalarNode && it.ShortTag() == "!!null" {
			d.problem(it.Line, p, CodeBadValue, "empty list item; remove it")
			continue
		}
		d.value(item, elem.Elem(), p)
		out = reflect.Append(out, elem.Elem())
	}
	v.Set(out)
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	t := v.Type()
	if n.Kind != yaml.MappingNode {
		where := "this"
		if path == "" {
			where = "the top level"
		}
		d.problem(n.Line, path, CodeType, fmt.Sprintf("expected a mapping of options (%s), found %s; %s must be 'key: value' lines", strings.Join(optionNames(t), ", "), kindName(n), where))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.problem(n.Content[i].Line, path, CodeType, "option names must be plain words; found "+kindName(n.Content[i]))
			continue
		}
		p := path
		if plainKeyRE.MatchString(k.Value) {
			p = join(path, k.Value)
		} // else the quoted key in the message names it; a raw one could break the line
		if first, dup := seen[k.Value]; dup {
			d.problem(k.Line, p, CodeDuplicate, fmt.Sprintf("set twice (first on line %d); keep one", first))
			continue
		}
		seen[k.Value] = k.Line
		f, ok := fieldByTag(t, k.Value)
		if !ok {
			d.problem(k.Line, p, CodeUnknown, unknownOption(t, k.Value))
			continue
		}
		d.value(val, v.FieldByIndex(f.Index), p)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tagName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// optionNames lists the options of a section that messages suggest: not
// those that are not built.
func optionNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if n := tagName(t.Field(i)); n != "" && !isUnavailable(t.Field(i)) {
			names = append(names, n)
		}
	}
	return names
}

// unknownOption names the bad key and the closest real option, because the
// usual cause is a typo.
func unknownOption(t reflect.Type, key string) string {
	names := optionNames(t)
	best := textx.Closest(strings.ToLower(key), names, 3)
	switch {
	case best != "":
		return fmt.Sprintf("unknown option %s; did you mean %s? (see docs/configuration.md)", quote(key), best)
	case len(names) == 0:
		return fmt.Sprintf("unknown option %s; remove it", quote(key))
	}
	return fmt.Sprintf("unknown option %s; known options here: %s", quote(key), strings.Join(names, ", "))
}
