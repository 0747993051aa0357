// Package process tells whether a process still runs, so that a command
// can tell the temporary file of one that was killed (its process id in
// the file's name) from one still being written.
package process
