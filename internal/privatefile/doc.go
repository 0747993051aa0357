// Package privatefile reads and creates the small secret files a store
// keeps beside its log (the NATS client seed, the wake key): mode 0600, a
// regular file opened without following a symlink, created by linking a
// synced temporary file into place so that it is never seen half-written
// and never replaces a file. Its errors name the file, never its content;
// callers wrap them with their own sentinel.
package privatefile
