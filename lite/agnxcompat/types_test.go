package agnxcompat

import (
	"encoding/json"
	"fmt"
)

// The parent's response types (crates/duragent-client/src/api.rs): a
// pointer tagged req is a non-Option field; the others are Option or
// serde(default).

type readyzResponse struct {
	Status        *string `json:"status" agnx:"req"`
	WorkspaceHash string  `json:"workspace_hash"`
}

type agentSummary struct {
	Name        *string `json:"name" agnx:"req"`
	Description *string `json:"description"`
	Version     *string `json:"version"`
}

type listAgentsResponse struct {
	Agents *[]agentSummary `json:"agents" agnx:"req"`
}

type agentDetailResponse struct {
	APIVersion *string `json:"api_version" agnx:"req"`
	Kind       *string `json:"kind" agnx:"req"`
	Metadata   *struct {
		Name        *string           `json:"name" agnx:"req"`
		Description *string           `json:"description"`
		Version     *string           `json:"version"`
		Labels      map[string]string `json:"labels"`
	} `json:"metadata" agnx:"req"`
	Spec *struct {
		Model *struct {
			Provider        *string  `json:"provider" agnx:"req"`
			Name            *string  `json:"name" agnx:"req"`
			Temperature     *float32 `json:"temperature"`
			MaxInputTokens  *uint32  `json:"max_input_tokens"`
			MaxOutputTokens *uint32  `json:"max_output_tokens"`
			BaseURL         *string  `json:"base_url"`
		} `json:"model" agnx:"req"`
		SystemPrompt *string `json:"system_prompt"`
		Instructions *string `json:"instructions"`
	} `json:"spec" agnx:"req"`
}

// sessionStatus is SessionStatus: any other value fails to decode.
type sessionStatus string

func (s *sessionStatus) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v {
	case "active", "paused", "running", "completed":
		*s = sessionStatus(v)
		return nil
	}
	return fmt.Errorf("unknown variant `%s`, expected one of `active`, `paused`, `running`, `completed` (§6)", v)
}

type getSessionResponse struct {
	SessionID *string        `json:"session_id" agnx:"req"`
	Agent     *string        `json:"agent" agnx:"req"`
	Status    *sessionStatus `json:"status" agnx:"req"`
	CreatedAt *string        `json:"created_at" agnx:"req"`
	UpdatedAt *string        `json:"updated_at"`
}

type sessionSummary struct {
	SessionID *string        `json:"session_id" agnx:"req"`
	Agent     *string        `json:"agent" agnx:"req"`
	Status    *sessionStatus `json:"status" agnx:"req"`
	CreatedAt *string        `json:"created_at" agnx:"req"`
}

type listSessionsResponse struct {
	Sessions *[]sessionSummary `json:"sessions" agnx:"req"`
}

type messageResponse struct {
	Role    *string `json:"role" agnx:"req"`
	Content *string `json:"content" agnx:"req"`
}

type getMessagesResponse struct {
	Messages *[]messageResponse `json:"messages" agnx:"req"`
}

type sendMessageResponse struct {
	MessageID *string `json:"message_id" agnx:"req"`
	Role      *string `json:"role" agnx:"req"`
	Content   *string `json:"content" agnx:"req"`
}

// pendingApprovalResponse is the 202 of POST messages.
type pendingApprovalResponse struct {
	SessionID *string `json:"session_id" agnx:"req"`
	CallID    *string `json:"call_id" agnx:"req"`
	Command   *string `json:"command" agnx:"req"`
}

// approveResponse is ApproveCommandResponse, tagged by status.
type approveResponse struct {
	Status    string
	MessageID string
	Content   string
	CallID    string
	Command   string
}

func (a *approveResponse) UnmarshalJSON(b []byte) error {
	var tag struct {
		Status *string `json:"status" agnx:"req"`
	}
	if err := decodeStrict(b, &tag); err != nil {
		return err
	}
	switch *tag.Status {
	case "complete":
		var c struct {
			MessageID *string `json:"message_id" agnx:"req"`
			Content   *string `json:"content" agnx:"req"`
		}
		if err := decodeStrict(b, &c); err != nil {
			return err
		}
		*a = approveResponse{Status: *tag.Status, MessageID: *c.MessageID, Content: *c.Content}
	case "pending_approval":
		var p struct {
			CallID  *string `json:"call_id" agnx:"req"`
			Command *string `json:"command" agnx:"req"`
		}
		if err := decodeStrict(b, &p); err != nil {
			return err
		}
		*a = approveResponse{Status: *tag.Status, CallID: *p.CallID, Command: *p.Command}
	default:
		return fmt.Errorf("unknown variant `%s`, expected `complete` or `pending_approval` (§6)", *tag.Status)
	}
	return nil
}

// problemDetails is the parent client's ProblemDetails: title required.
type problemDetails struct {
	Title  *string `json:"title" agnx:"req"`
	Detail *string `json:"detail"`
}

// problem is the full problem+json body, for the §8 checks.
type problem struct {
	Type   *string `json:"type" agnx:"req"`
	Title  *string `json:"title" agnx:"req"`
	Status *int    `json:"status" agnx:"req"`
	Detail *string `json:"detail"`
}
