package natsbus

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/hikoutei/hikoutei-go/events"
)

// SuffixChainHead: JSON ChainHeadNotification, the log's hash chain head
// after a commit batch.
const SuffixChainHead = "chain.head"

// ChainHeadSchemaVersion is the schema of ChainHeadNotification.
const ChainHeadSchemaVersion = 1

// ChainHeadNotification is the JSON body of "hikoutei.<store>.chain.head":
// the last record's sequence and the log's hash chain value after it, the
// head a third party pins (`hikoutei audit verify --pin SEQ:HASH`).
//
//	{"schema":1,"store":"demo","seq":1234,"hash":"<64 hex digits>"}
type ChainHeadNotification struct {
	Schema int    `json:"schema"`
	Store  string `json:"store"`
	Seq    uint64 `json:"seq"`
	Hash   string `json:"hash"`
}

// Pin is the head as an events.ChainPin. Errors: a hash that is not 64
// hex digits.
func (n ChainHeadNotification) Pin() (events.ChainPin, error) {
	h, err := events.ParseChainHash(n.Hash)
	return events.ChainPin{Seq: n.Seq, Hash: h}, err
}

// PublishChainHead publishes the chain head p on "hikoutei.<store>.chain.head".
// Like the conflict notifications it queues the message for the publisher
// goroutine and never waits on the network: a full queue, a closed Bus or
// NATS being down drop it (counted in Stats). A listener's clients may
// subscribe to it but never publish it.
func (b *Bus) PublishChainHead(p events.ChainPin) {
	data, _ := json.Marshal(ChainHeadNotification{Schema: ChainHeadSchemaVersion, Store: b.cfg.Store, Seq: p.Seq, Hash: p.Hash.String()})
	if b.closed.Load() {
		b.st.notifDropped.Add(1)
		return
	}
	select {
	case b.notify <- outMsg{subject: b.Subject(SuffixChainHead), data: data}:
	default:
		b.st.notifDropped.Add(1)
	}
}

// SubscribeChainHeads calls fn for every chain head this store publishes
// after it returns (when connected; it waits up to Config.ConnectTimeout
// for the server to register the subscription), serially on the subscription's goroutine; a message
// of another schema or not JSON is skipped. stop unsubscribes. Errors:
// ErrClosed, ErrSubscribeFailed.
func (b *Bus) SubscribeChainHeads(fn func(ChainHeadNotification)) (stop func(), err error) {
	if b.closed.Load() {
		return nil, ErrClosed
	}
	sub, err := b.nc.Subscribe(b.Subject(SuffixChainHead), func(m *nats.Msg) {
		var n ChainHeadNotification
		if json.Unmarshal(m.Data, &n) == nil && n.Schema == ChainHeadSchemaVersion {
			fn(n)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%w: chain head: %v", ErrSubscribeFailed, err)
	}
	b.flushSubscription()
	return func() { _ = sub.Unsubscribe() }, nil
}
