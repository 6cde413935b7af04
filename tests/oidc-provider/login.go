// The login UI: the page the authorize endpoint sends the browser to
// (/login?authRequestID=...), a username/password form; on success it completes the
// sign-in request and sends the browser to the op library's callback, which redirects
// to the client with the code. A browser that signed in before (session cookie) skips
// the form unless the client asked for prompt=login. No consent screen.
package main

import (
	"context"
	"html/template"
	"net/http"
)

const sessionCookie = "kerf_oidc_session"

var loginPage = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in - kerf test OIDC provider</title></head>
<body>
<h1>Sign in</h1>
{{if .Error}}<p id="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="authRequestID" value="{{.ID}}">
<label for="username">Username</label>
<input name="username" id="username" value="{{.Username}}" autocomplete="username">
<label for="password">Password</label>
<input name="password" id="password" type="password" autocomplete="current-password">
<button type="submit">Sign in</button>
</form>
</body>
</html>
`))

// login serves /login; callback is where a completed sign-in request goes next.
type login struct {
	store    *Storage
	callback func(ctx context.Context, id string) string
}

func (l *login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "cannot parse form", http.StatusBadRequest)
		return
	}
	id := r.FormValue("authRequestID")
	req, err := l.store.AuthRequestByID(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodGet:
		if c, err := r.Cookie(sessionCookie); err == nil && !req.(*authRequest).forcesLogin() {
			if subject, ok := l.store.browserSessionUser(c.Value); ok {
				l.complete(w, r, id, subject)
				return
			}
		}
		render(w, id, "", nil)
	case http.MethodPost:
		username := r.PostFormValue("username")
		subject, err := l.store.checkPassword(username, r.PostFormValue("password"))
		if err != nil {
			render(w, id, username, err)
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: sessionCookie, Value: l.store.startBrowserSession(subject),
			Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		})
		l.complete(w, r, id, subject)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// complete marks the request signed in and sends the browser on to the callback.
func (l *login) complete(w http.ResponseWriter, r *http.Request, id, subject string) {
	if err := l.store.completeLogin(id, subject); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, l.callback(r.Context(), id), http.StatusFound)
}

// render shows the form, with the reason the last attempt failed.
func render(w http.ResponseWriter, id, username string, failure error) {
	msg := ""
	if failure != nil {
		msg = failure.Error()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = loginPage.Execute(w, struct{ ID, Username, Error string }{id, username, msg})
}
