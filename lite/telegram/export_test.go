package telegram

// SetBeforeSend installs the crash tests' stop between receiving an update
// and committing its message.
func SetBeforeSend(g *Gateway, f func(updateID int64)) { g.beforeSend = f }
