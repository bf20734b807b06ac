package config

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// fmtDur writes a duration the way a person would in the config: 60s → 1m,
// 90s → 1m30s, 2h → 2h (time.Duration.String would say 2h0m0s).
func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0 && d < time.Hour && d > -time.Hour:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0 && d < time.Minute && d > -time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// FormatDuration writes a duration as the config spells it (60s → "1m").
func FormatDuration(d time.Duration) string { return fmtDur(d) }

// YAML renders c as config YAML (no comments), with durations as strings; it
// loads back to c. Options that are not built are left out.
func (c Config) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(toNode(reflect.ValueOf(c))); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Map returns c as nested maps keyed by option name, with durations as
// strings, for JSON output that reads like the YAML file. Options that are not
// built are left out.
func (c Config) Map() map[string]any {
	return toAny(reflect.ValueOf(c)).(map[string]any)
}

func toNode(v reflect.Value) *yaml.Node {
	switch {
	case v.Type() == durationType:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmtDur(time.Duration(v.Int()))}
	case v.Kind() == reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i := 0; i < v.NumField(); i++ {
			if isUnavailable(v.Type().Field(i)) {
				continue
			}
			name := tagName(v.Type().Field(i))
			n.Content = append(n.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name},
				toNode(v.Field(i)))
		}
		return n
	case v.Kind() == reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for i := 0; i < v.Len(); i++ {
			e := toNode(v.Index(i))
			if e.Kind != yaml.ScalarNode {
				n.Style = 0 // block style for lists of mappings (gates)
			}
			n.Content = append(n.Content, e)
		}
		return n
	case v.Kind() == reflect.String:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v.String()}
	case v.Kind() == reflect.Int:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatInt(v.Int(), 10)}
	case v.Kind() == reflect.Float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(v.Float(), 'f', -1, 64)}
	case v.Kind() == reflect.Bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatBool(v.Bool())}
	}
	panic(fmt.Sprintf("config: cannot render %s", v.Type()))
}

func toAny(v reflect.Value) any {
	switch {
	case v.Type() == durationType:
		return fmtDur(time.Duration(v.Int()))
	case v.Kind() == reflect.Struct:
		m := map[string]any{}
		for i := 0; i < v.NumField(); i++ {
			if isUnavailable(v.Type().Field(i)) {
				continue
			}
			m[tagName(v.Type().Field(i))] = toAny(v.Field(i))
		}
		return m
	case v.Kind() == reflect.Slice:
		s := make([]any, 0, v.Len())
		for i := 0; i < v.Len(); i++ {
			s = append(s, toAny(v.Index(i)))
		}
		return s
	}
	return v.Interface()
}
