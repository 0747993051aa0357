// Package segstore is where a store's sealed segments live: a small
// storage contract (Store) with two implementations, a folder on the
// local disk (Dir, the default: DIR/segments) and, in package
// segstore/blobstore, any object store that gocloud.dev/blob opens by
// URL (S3, GCS, Azure, an in-memory bucket for tests).
//
// The events package writes each segment with Put and reads it back
// before the log vouches for it (upload before delete, I38); readers
// fetch segments with Get. Segments are immutable: a name is written
// once by the seal that vouches for it (or again, with the same bytes,
// by a seal that retries one that did not commit).
//
// Open resolves a URL: "" is the store directory's segments folder,
// file:///path a folder (Dir), any other scheme the opener registered for
// it (package blobstore registers one for every scheme gocloud.dev/blob
// knows in the program; a program links blobstore and the drivers it
// wants, e.g. gocloud.dev/blob/s3blob, by importing them).
package segstore
