// Package wakehook is the one implementation of the authenticated wake-up
// request that tells a store's Input pollers to poll now: what an Apps
// Script onEdit trigger sends when a person edits the spreadsheet.
//
// A wake request is POST with one header,
//
//	X-Hikoutei-Wake: t=<unix seconds>,n=<nonce>,s=<hex HMAC-SHA256>
//
// where the signature is HMAC-SHA256, keyed with the shared secret's
// bytes, over "hikoutei-wake-v1\n<t>\n<n>" for a wake without a body (it
// names every tab), or over "hikoutei-wake-v2\n<t>\n<n>\n<body>" for a
// wake whose body {"sheet": <sheetId>} names the tab a person edited (at
// most 256 bytes), so the pollers read only that tab.
//
// The rule: a wake is a hint, never data, so whatever reaches the handler
// costs at most one poll. A request is refused (and polls nothing) when
// its header does not parse, its signature does not verify, its
// timestamp is more than the window away from now, or its nonce was seen
// within the window (a bounded memory). Accepted wakes are coalesced: at
// most one poll starts per minimum interval (the first at once, one more
// at the end of the interval for everything accepted meanwhile).
package wakehook
