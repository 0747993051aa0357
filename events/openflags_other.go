//go:build !unix

package events

// noFollowOpen: these systems have neither O_NOFOLLOW nor O_NONBLOCK;
// readRegularFile's look before the open and its check of the opened
// file after it still refuse a file that is not the regular file looked
// at.
const noFollowOpen = 0
