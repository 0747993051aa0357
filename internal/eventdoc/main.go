// Command eventdoc writes docs/events.md, the reference of the event
// catalogue, from the catalogue itself (events.Catalogue(): types,
// schemas, streams, keys, upcasts) and the doc comments of the events
// package's payload types and fields, read from its source with go/parser
// and go/doc.
//
// go generate ./events/ runs it (the go:generate line is in
// events/catalogue.go); by hand, from the module root:
//
//	go run ./internal/eventdoc -out docs/events.md
//
// Without -out it writes the document to standard output. Its tests fail
// when docs/events.md is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/hikoutei/hikoutei-go/events"
)

func main() {
	out := flag.String("out", "", "write the document to this file instead of standard output")
	flag.Parse()
	doc, _, err := generate()
	if err == nil {
		if *out == "" {
			_, err = os.Stdout.Write(doc)
		} else if err = os.MkdirAll(filepath.Dir(*out), 0o755); err == nil {
			err = os.WriteFile(*out, doc, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventdoc:", err)
		os.Exit(1)
	}
}

// eventsPkg is the import path of the events package.
var eventsPkg = reflect.TypeFor[events.Entry]().PkgPath()

// generate renders the document for this build's catalogue. It also
// returns notes on what the doc comments leave undocumented.
func generate() ([]byte, []string, error) {
	src, err := loadSource(eventsPkg)
	if err != nil {
		return nil, nil, err
	}
	return render(src, events.Catalogue())
}
