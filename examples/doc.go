// Package examples holds complete programs that embed Hikoutei, one per
// directory: localonly (a local-only store), localonly-size (the smallest
// local-only program, whose binary docs/operations.md "Binary size"
// measures), sync (a store syncing to a spreadsheet the environment
// names), verifylog (an auditor's independent check of a log's hash
// chain) and verifystream (the same check of a store's NATS JetStream
// mirror). They are built and run by this
// package's tests, so `make test` proves they work as shown.
package examples
