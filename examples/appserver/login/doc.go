// Package login is the example app server's own authentication: a fixed
// user list with PBKDF2 password hashes, a server-side session map and an
// HttpOnly cookie. It exists to show where the identity that runedge
// records comes from: the app server decides who the user is, and only then
// speaks to runedge on the user's behalf.
package login
