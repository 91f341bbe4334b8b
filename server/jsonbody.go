package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/verify"
)

// bindJSON reads the request's body, at most limit bytes, as exactly one JSON object
// into v (fields v does not know refused when strict). A body over the limit is 413
// naming it; any other fault is 400, saying what was wrong (readJSONObject) after
// "expected a JSON body like " and example.
func bindJSON(c echo.Context, limit int64, v any, strict bool, example string) error {
	err := readJSONObject(http.MaxBytesReader(c.Response(), c.Request().Body, limit), v, strict)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return errf(http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %s (%d bytes), the limit for this request: send a shorter one, like %s",
			verify.FormatSize(tooLarge.Limit), tooLarge.Limit, example))
	case err != nil:
		return errf(http.StatusBadRequest, "expected a JSON body like "+example+": "+err.Error())
	}
	return nil
}

// readJSONObject decodes the one JSON value r holds into v, an object's fields unknown to
// v refused when strict: anything after it (a second object, junk) is refused, as a
// second Decode must meet the end of the body. Its errors are for people, in plain words:
// a field of the wrong type is `field "reason" must be a string, found an array`, never a
// Go type name. A *http.MaxBytesError is returned as is, for the caller to answer 413.
func readJSONObject(r io.Reader, v any, strict bool) error {
	dec := json.NewDecoder(r)
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return nil
	case errors.As(err, new(*http.MaxBytesError)):
		return err
	}
	return errors.New("the body holds more after its JSON object: send one object and nothing after it")
}

// jsonProblem says in plain words why a body could not be decoded.
func jsonProblem(err error) error {
	var (
		tooLarge *http.MaxBytesError
		typeErr  *json.UnmarshalTypeError
		syntax   *json.SyntaxError
	)
	switch {
	case errors.As(err, &tooLarge):
		return err
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return fmt.Errorf("the body must be %s, found %s", jsonWordFor(typeErr.Type), jsonWord(typeErr.Value))
	case errors.As(err, &typeErr):
		return fmt.Errorf("field %q must be %s, found %s", typeErr.Field, jsonWordFor(typeErr.Type), jsonWord(typeErr.Value))
	case errors.As(err, &syntax):
		return fmt.Errorf("the body is not valid JSON at byte %d", syntax.Offset)
	case errors.Is(err, io.EOF):
		return errors.New("the body is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the body ends inside its JSON")
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return errors.New("unknown field " + f)
	}
	return errors.New("the body could not be read as JSON")
}

// jsonWordFor names the JSON value a Go type takes.
func jsonWordFor(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number from 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "a JSON object"
	}
	return "another JSON value"
}

// jsonWord names the JSON value a decoder found ("string", "number 1.5", "array", ...).
func jsonWord(found string) string {
	kind, _, _ := strings.Cut(found, " ")
	switch kind {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return "another JSON value"
}
