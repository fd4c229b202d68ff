package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoad_Notify(t *testing.T) {
	for yaml, want := range map[string]NotifySettings{
		"":                          {When: NotifyUnwatched},
		"  notify: {when: never}\n": {When: NotifyNever},
		"  notify:\n    when: always\n    deliveries:\n      - {type: chat}\n      - {type: chat, gateway: telegram, chat_id: \"42\"}\n" +
			"      - {type: webhook, url: \"https://hooks.example/x\"}\n      - {type: ntfy, url: \"https://ntfy.sh/topic\", token: \"${NTFY}\", priority: high}\n": {
			When: NotifyAlways, Deliveries: []Delivery{{Type: "chat"}, {Type: "chat", Gateway: "telegram", ChatID: "42"},
				{Type: "webhook", URL: "https://hooks.example/x"}, {Type: "ntfy", URL: "https://ntfy.sh/topic", Token: "${NTFY}", Priority: "high"}}},
	} {
		a, err := Load(writeAgent(t, map[string]string{FileName: header + memModel + yaml}))
		require.NoError(t, err, yaml)
		assert.Equal(t, want, a.Notify, yaml)
	}
}

func TestLoad_NotifyErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"  notify: {when: sometimes}\n":                                                                                                                      `agent.yaml:9: spec.notify.when "sometimes" is not one of unwatched, always, never`,
		"  notify:\n    deliveries:\n      - {type: email}\n":                                                                                                `agent.yaml:11: spec.notify.deliveries[0].type "email" is not one of log, chat, webhook, ntfy`,
		"  notify:\n    deliveries:\n      - type: ntfy\n        url: ftp://x\n":                                                                             "agent.yaml:12: spec.notify.deliveries[0].url must be an http or https URL",
		"  notify:\n    deliveries:\n      - {type: chat, gateway: telegram}\n":                                                                              "agent.yaml:11: spec.notify.deliveries[0] names a gateway without a chat_id",
		"  notify:\n    deliveries:\n      - {type: webhook, url: \"https://x\", token: t}\n":                                                                "agent.yaml:11: spec.notify.deliveries[0]: token and priority are for type ntfy only",
		"  notify:\n    deliveries:\n      - {type: ntfy, url: \"https://x\", priority: loud}\n":                                                             `spec.notify.deliveries[0].priority "loud" is not one of 1, 2, 3, 4, 5, min, low, default, high, max, urgent`,
		"  notify:\n    deliveries:\n      - {type: log, url: \"https://x\"}\n":                                                                              "agent.yaml:11: spec.notify.deliveries[0].url is for types webhook and ntfy only",
		"  notify:\n    deliveries: [{type: log}, {type: log}, {type: log}, {type: log}, {type: log}, {type: log}, {type: log}, {type: log}, {type: log}]\n": "spec.notify.deliveries has 9 entries; at most 8 are allowed",
	} {
		_, err := Load(writeAgent(t, map[string]string{FileName: header + memModel + yaml}))
		require.Error(t, err, yaml)
		assert.Contains(t, err.Error(), want, yaml)
	}
}
