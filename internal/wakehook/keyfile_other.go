//go:build !unix

package wakehook

// noFollow: no such open flags here; readKey still requires a regular file.
const noFollow = 0
