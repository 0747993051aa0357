package sheetsio

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// ChainHead is a store's hash-chain head as the authority tab publishes
// it: the last record's sequence and the chain value after it (64
// lowercase hex digits). Its text form, SEQ:HASH, is what
// `hikoutei audit verify --pin` and Store.Verify's pin read.
type ChainHead struct {
	Seq  uint64
	Hash string
}

// String is the SEQ:HASH form.
func (h ChainHead) String() string { return strconv.FormatUint(h.Seq, 10) + ":" + h.Hash }

// ParseChainHead reads the SEQ:HASH form; ok is false for anything else
// (a blank cell, a person's edit), which the dispatch treats as no head.
func ParseChainHead(s string) (h ChainHead, ok bool) {
	seq, hash, found := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !found || err != nil || len(hash) != 64 {
		return ChainHead{}, false
	}
	if _, err := hex.DecodeString(hash); err != nil || strings.ToLower(hash) != hash {
		return ChainHead{}, false
	}
	return ChainHead{Seq: n, Hash: hash}, true
}
