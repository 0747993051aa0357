//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package projector

import "golang.org/x/sys/unix"

// slotRegionHere says mapSlotRegion maps a region on this platform.
const slotRegionHere = true

// mapSlotRegion maps the slots' region: private, anonymous, untouched.
func mapSlotRegion() []byte {
	b, err := unix.Mmap(-1, 0, slotRegionBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil
	}
	return b
}

// releaseSlots returns the memory of slots no longer in use to the OS.
func releaseSlots(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED) // best effort: the slots stay valid either way
	}
}
