// Package examples holds complete programs that embed Hikoutei, one per
// directory: localonly (a local-only store), localonly-size (the smallest
// local-only program, whose binary the README's "Binary size" section
// measures) and sync (a store syncing to a spreadsheet the environment
// names). They are built and run by this
// package's tests, so `make test` proves they work as shown.
package examples
