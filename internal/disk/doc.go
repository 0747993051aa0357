// Package disk measures what a store keeps on disk (the hot log, the
// sealed segments, the read model) and the free space of the filesystem
// holding it, and judges from samples of the store's size whether that
// filesystem fills soon. The judgement (Project) is pure: a function of
// the samples, the space and the time it is given.
package disk
