package topology

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// knownKeys holds every JSON key of the file format, spelt exactly.
var knownKeys = collectKeys(reflect.TypeFor[fileJSON](), map[string]bool{})

func collectKeys(t reflect.Type, keys map[string]bool) map[string]bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return keys
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
		collectKeys(f.Type, keys)
	}
	return keys
}

// keyFrame is one open JSON object or array in checkKeys.
type keyFrame struct {
	keys      map[string]bool // keys seen so far; nil for an array
	expectKey bool            // in an object, the next string is a key
	under     string          // the key whose value this is ("" at the top or in an array)
}

// checkKeys walks the JSON tokens of data and rejects keys that are not
// spelt exactly as in the format (encoding/json would match them ignoring
// case), keys repeated within one object (encoding/json would keep the last
// silently), and nesting deeper than maxJSONDepth. Other syntax errors are
// left to the decoder, which reports them with offsets.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []keyFrame
	lastKey := ""
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // a syntax error: the decoder reports it
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if len(stack) == maxJSONDepth {
					return fmt.Errorf("offset %d: nested deeper than %d", dec.InputOffset(), maxJSONDepth)
				}
				frame := keyFrame{}
				if tok == '{' {
					frame = keyFrame{keys: map[string]bool{}, expectKey: true, under: lastKey}
				}
				lastKey = ""
				stack = append(stack, frame)
			default: // '}' or ']'
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			top := len(stack) - 1
			if top >= 0 && stack[top].keys != nil && stack[top].expectKey {
				if err := checkKey(stack[top], tok, dec.InputOffset()); err != nil {
					return err
				}
				stack[top].expectKey = false
				lastKey = tok
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// checkKey checks one key of the object f; the keys of "levels" are level
// names.
func checkKey(f keyFrame, key string, offset int64) error {
	seen := f.keys
	if f.under == "levels" {
		if !levelNames[key] {
			return fmt.Errorf("offset %d: levels: unknown level %q (want host, site or wan; names are case-sensitive)", offset, key)
		}
	} else if !knownKeys[key] {
		return fmt.Errorf("offset %d: unknown key %q (keys are case-sensitive)", offset, key)
	}
	if seen[key] {
		return fmt.Errorf("offset %d: key %q repeated in one object", offset, key)
	}
	seen[key] = true
	return nil
}
