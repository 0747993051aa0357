package engine

import (
	"errors"
	"fmt"
)

// Sentinel errors of subscriptions (stable snake_case codes; the root
// package re-exports them).
var (
	// ErrSubscriptionHandler: a subscription's handler returned an error;
	// the subscription stopped before that event (see *SubscriptionError).
	ErrSubscriptionHandler = errors.New("subscription_handler_failed")
	// ErrSubscriptionPanic: a subscription's handler panicked; the panic
	// was recovered and the subscription stopped before that event.
	ErrSubscriptionPanic = errors.New("subscription_handler_panicked")
	// ErrSubscriptionActive: a subscription of that name already runs on
	// this store.
	ErrSubscriptionActive = errors.New("subscription_active")
	// ErrInvalidSubscription: an empty or over-long subscription name, a
	// missing handler or a negative batch size.
	ErrInvalidSubscription = errors.New("invalid_subscription")
)

// SubscriptionError says which event a subscription's handler failed on.
// errors.Is matches ErrSubscriptionHandler or ErrSubscriptionPanic, and the
// handler's own error.
type SubscriptionError struct {
	Name  string // the subscription
	Seq   uint64 // the event the handler failed on; the checkpoint is before it
	Panic any    // the recovered value when the handler panicked (nil otherwise)
	Err   error  // the handler's error (nil after a panic)
}

func (e *SubscriptionError) Error() string {
	if e.Panic != nil {
		return fmt.Sprintf("%s: subscription %q at seq %d: %v", ErrSubscriptionPanic, e.Name, e.Seq, e.Panic)
	}
	return fmt.Sprintf("%s: subscription %q at seq %d: %v", ErrSubscriptionHandler, e.Name, e.Seq, e.Err)
}

// Unwrap gives the sentinel and the handler's error.
func (e *SubscriptionError) Unwrap() []error {
	if e.Panic != nil {
		return []error{ErrSubscriptionPanic}
	}
	return []error{ErrSubscriptionHandler, e.Err}
}
