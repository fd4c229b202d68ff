package agnxcompat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// decodeStrict decodes body into v as serde would into the parent's
// struct: a wrong type fails, unknown fields are ignored, and a field
// tagged `agnx:"req"` (a non-Option field in the parent) that is missing
// or null fails, naming it.
func decodeStrict(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return err
	}
	return checkRequired(reflect.ValueOf(v).Elem(), "")
}

func checkRequired(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkRequired(v.Elem(), path)
	case reflect.Slice:
		for i := range v.Len() {
			if err := checkRequired(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			p := name
			if path != "" {
				p = path + "." + name
			}
			fv := v.Field(i)
			if f.Tag.Get("agnx") == "req" && fv.Kind() == reflect.Pointer && fv.IsNil() {
				return fmt.Errorf("missing field `%s` (required by the parent's struct)", p)
			}
			if err := checkRequired(fv, p); err != nil {
				return err
			}
		}
	}
	return nil
}
