package mediaurl

import "testing"

// TestPolicy: by default https: and data: URLs to public hosts pass, and
// every other scheme, and a private, loopback or link-local host in any
// spelling, is refused; the two settings open what they name.
func TestPolicy(t *testing.T) {
	deflt, private, http := Policy{}, Policy{AllowPrivateHosts: true}, Policy{AllowHTTP: true}
	for _, c := range []struct {
		url                  string
		deflt, private, http bool
	}{
		{"https://example.com/cat.png", true, true, true},
		{"HTTPS://Example.COM/cat.png", true, true, true},
		{"https://93.184.215.14/cat.png", true, true, true},
		{"https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/x", true, true, true},
		{"data:image/png;base64,iVBORw0KGgo=", true, true, true},
		{"http://example.com/cat.png", false, false, true},
		{"http://169.254.169.254/latest/meta-data/", false, false, false},
		{"https://169.254.169.254/latest/meta-data/", false, true, false},
		{"https://127.0.0.1/", false, true, false},
		{"https://127.1/", false, true, false},
		{"https://2130706433/", false, true, false},
		{"https://0x7f.0.0.1/", false, true, false},
		{"https://0177.0.0.1/", false, true, false},
		{"https://10.0.0.8/", false, true, false},
		{"https://192.168.1.1:8443/", false, true, false},
		{"https://172.16.0.1/", false, true, false},
		{"https://100.64.0.1/", false, true, false},
		{"https://0.0.0.0/", false, true, false},
		{"https://[::1]/", false, true, false},
		{"https://[::ffff:127.0.0.1]/", false, true, false},
		{"https://[fe80::1]/", false, true, false},
		{"https://[fd00::1]/", false, true, false},
		{"https://localhost/", false, true, false},
		{"https://LOCALHOST./", false, true, false},
		{"https://api.localhost/", false, true, false},
		{"https://printer.local/", false, true, false},
		{"https://metadata.google.internal/", false, true, false},
		{"https://1.2.3.04x/", true, true, true}, // not numeric: a name
		{"https://999.1.1.1/", false, true, false},
		{"gopher://example.com/", false, false, false},
		{"file:///etc/passwd", false, false, false},
		{"ftp://example.com/x", false, false, false},
		{"javascript:alert(1)", false, false, false},
		{"https:///nohost", false, false, false},
		{"https:opaque", false, false, false},
		{"example.com/cat.png", false, false, false},
	} {
		for _, p := range []struct {
			name string
			pol  Policy
			want bool
		}{{"default", deflt, c.deflt}, {"allow_private_hosts", private, c.private}, {"allow_http", http, c.http}} {
			if err := p.pol.Check(c.url); (err == nil) != p.want {
				t.Errorf("%s: %s: %v, want pass %v", p.name, c.url, err, p.want)
			}
		}
	}
}

func TestCheckFileData(t *testing.T) {
	for data, ok := range map[string]bool{
		"data:application/pdf;base64,JVBERi0=": true,
		"JVBERi0xLjQK":                         true,
		"https://example.com/a.pdf":            false,
		"file:///etc/passwd":                   false,
	} {
		if err := CheckFileData(data); (err == nil) != ok {
			t.Errorf("%s: %v, want pass %v", data, err, ok)
		}
	}
}
