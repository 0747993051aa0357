//go:build !unix

package natsbus

// noFollow: no such open flags here; readSeed still requires a regular file.
const noFollow = 0
