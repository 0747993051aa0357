// Package browsertest holds the browser tests: the emulator's web view
// (webview_test.go) and the status page of `hikoutei serve --http`
// (statuspage_test.go), each loaded in headless Chromium (Debian's
// chromium at /usr/bin/chromium) driven with chromedp, and failing on any
// console error, warning or Content-Security-Policy violation.
//
// It is a module of its own (with a replace of the library to ../) so
// that the library's go.mod does not carry a browser driver: a program
// that depends on github.com/hikoutei/hikoutei-go never pulls chromedp.
// The tests use only what a user has: the emulator's exported API, the
// root package, hikouteitest, and the hikoutei command built from
// ../cmd/hikoutei and run as its own process. `make test` and `make lint`
// run and check it.
package browsertest
