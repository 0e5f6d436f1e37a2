package httpapi

import (
	"bytes"
	"encoding/json"
)

// Upstream's admin server prints JSON with Jackson's default pretty
// printer, and clients match on its spacing (BookKeeper's own test looks
// for `"<path>" : true`). appendJackson prints the same way:
//
//	{
//	  "a" : 1,
//	  "b" : [ 1, 2 ],
//	  "c" : [ {
//	    "d" : true
//	  } ]
//	}
//
// Objects put each field on its own line, indented two spaces per level
// of object nesting, with " : " between key and value; arrays stay on one
// line, "[ a, b ]"; the empty object is "{ }" and the empty array "[ ]".
// Strings escape only what JSON requires (no HTML escaping), as Jackson.

// jsonField is one field of a jsonObject.
type jsonField struct {
	key   string
	value any
}

// jsonObject is a JSON object whose fields print in order.
type jsonObject []jsonField

// appendJackson appends v to dst. v is a jsonObject, a []any, or a value
// encoding/json encodes as a scalar (string, bool, integer, float).
func appendJackson(dst []byte, v any, level int) []byte {
	switch v := v.(type) {
	case jsonObject:
		if len(v) == 0 {
			return append(dst, "{ }"...)
		}
		dst = append(dst, '{')
		for i, f := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '\n')
			dst = appendIndent(dst, level+1)
			dst = appendScalar(dst, f.key)
			dst = append(dst, " : "...)
			dst = appendJackson(dst, f.value, level+1)
		}
		dst = append(dst, '\n')
		dst = appendIndent(dst, level)
		return append(dst, '}')
	case []any:
		if len(v) == 0 {
			return append(dst, "[ ]"...)
		}
		dst = append(dst, "[ "...)
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJackson(dst, e, level)
		}
		return append(dst, " ]"...)
	}
	return appendScalar(dst, v)
}

func appendIndent(dst []byte, level int) []byte {
	for range level {
		dst = append(dst, "  "...)
	}
	return dst
}

// appendScalar appends v as encoding/json encodes it, without HTML
// escaping. A value it cannot encode prints as null.
func appendScalar(dst []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(dst, "null"...)
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
