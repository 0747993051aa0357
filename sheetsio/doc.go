// Package sheetsio is the contract between the sync engine and a
// spreadsheet: the Client interface, the guarded row operations a dispatch
// carries (Batch, Op, Fence, Receipt) and their outcomes (OpResult,
// WriteError), what a read returns (TabSnapshot, GridSnapshot, Authority,
// ReceiptRecord), the errors and their stable codes, and the pure rules
// over them (row hashes, receipts, duplicate copies). It links no Google
// code: package gsheets implements Client over the Google Sheets API.
// Sub-packages hold the pure parts: cell (value codec), layout (tabs,
// headers, row bindings), a1 (A1 notation) and emulator.
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package sheetsio
