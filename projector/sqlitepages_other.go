//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package projector

// slotRegionHere says mapSlotRegion maps a region on this platform.
const slotRegionHere = false

// mapSlotRegion maps no region here: every page goes to the allocator.
func mapSlotRegion() []byte { return nil }

func releaseSlots([]byte) {}
