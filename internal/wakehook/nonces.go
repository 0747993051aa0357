package wakehook

// nonces remembers the nonces accepted within the window, each with its
// signed timestamp, up to max of them.
type nonces struct {
	max  int
	seen map[string]int64
}

// add remembers nonce (signed at unix) or refuses it: ErrReplayed when
// it is remembered, ErrBusy when the memory is full of nonces signed at
// or after oldest (older ones are forgotten first: their timestamps are
// refused as stale anyway).
func (n *nonces) add(nonce string, unix, oldest int64) error {
	if _, ok := n.seen[nonce]; ok {
		return ErrReplayed
	}
	if len(n.seen) >= n.max {
		n.forgetBefore(oldest)
	}
	if len(n.seen) >= n.max {
		return ErrBusy
	}
	n.seen[nonce] = unix
	return nil
}

// forgetBefore drops the nonces signed before oldest.
func (n *nonces) forgetBefore(oldest int64) {
	for k, at := range n.seen {
		if at < oldest {
			delete(n.seen, k)
		}
	}
}
