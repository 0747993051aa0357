// Package tracingtest holds the tracing test: a commit, a dispatch and a
// poll each produce the span docs/metrics.md documents, and no span
// carries an id, a value or the spreadsheet id.
//
// It is a module of its own (with a replace of the library to ../) so
// that the library's go.mod does not carry the OpenTelemetry SDK, which
// only this test needs to record spans: a program that depends on
// github.com/hikoutei/hikoutei-go gets the OpenTelemetry API only. The
// test uses only what a user has: the root package, events' manual clock
// and hikouteitest. `make test` and `make lint` run and check it.
package tracingtest
