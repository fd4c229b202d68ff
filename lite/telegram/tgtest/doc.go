// Package tgtest is an httptest fake of the Telegram Bot API for tests:
// getMe, getUpdates (a real long poll), sendMessage, editMessageText,
// sendChatAction, answerCallbackQuery, getFile and file downloads, in the
// Bot API's JSON shapes ({"ok":true,"result":...} or {"ok":false,
// "error_code":...,"description":...,"parameters":{"retry_after":N}}).
//
// It keeps what a user would see: each chat's messages with their current
// text, so a test can check that a streamed reply ended in the full text
// and was sent once. HTML sent with parse_mode HTML is checked as Telegram
// does (known tags, balanced, entities escaped) and refused with 400
// "can't parse entities" otherwise; texts over 4,096 characters are
// refused with "message is too long".
//
// Faults are queued per method: an error answer (429 with retry_after, 409,
// 400), a request that hangs until the client gives up, a connection
// dropped mid-request. Hold parks one matching request for crash tests.
//
// It imports only the standard library, so any package's tests may use it.
package tgtest
