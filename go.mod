module github.com/agnx-lite/agnx-lite

go 1.26

require (
	github.com/goccy/go-yaml v1.19.2
	github.com/spf13/pflag v1.0.10
	github.com/stretchr/testify v1.12.1
	github.com/tetratelabs/wazero v1.12.0
	github.com/valyala/fastjson v1.6.10
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sys v0.45.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
