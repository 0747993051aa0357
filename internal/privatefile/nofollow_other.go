//go:build !unix

package privatefile

// noFollow: no such open flags here; Read still requires a regular file.
const noFollow = 0
