package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// flagValueWants is what a flag of each value type takes, said instead
// of the Go parser's error (strconv.ParseUint: parsing "-1": invalid
// syntax) when a value does not parse.
var flagValueWants = map[string]string{
	"uint": "a whole number, 0 or more", "uint8": "a whole number, 0 or more", "uint16": "a whole number, 0 or more",
	"uint32": "a whole number, 0 or more", "uint64": "a whole number, 0 or more",
	"int": "a whole number", "int8": "a whole number", "int16": "a whole number", "int32": "a whole number", "int64": "a whole number",
	"float32": "a number", "float64": "a number",
	"bool":     "true or false",
	"duration": "a duration such as 500ms, 30s, 5m or 1h30m",
}

// plainFlagValueError rewrites pflag's error for a value of a number,
// boolean or duration flag that does not parse into what the flag takes
// (out of range for a number too large); any other error is returned as
// it is.
func plainFlagValueError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) || iv.GetFlag() == nil {
		return err
	}
	want, ok := flagValueWants[iv.GetFlag().Value.Type()]
	if !ok {
		return err // the flag's own Set said what it takes
	}
	var num *strconv.NumError
	if errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange) {
		want += ", within range"
	}
	return fmt.Errorf("invalid argument %q for \"--%s\" flag: want %s", iv.GetValue(), iv.GetFlag().Name, want)
}
