//go:build !unix

package disk

// statfs cannot tell the space on this platform.
func statfs(string) (Space, error) { return Space{}, ErrSpaceUnknown }
