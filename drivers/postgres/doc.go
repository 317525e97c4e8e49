// Package postgres is the PostgreSQL backend of anysqs.
package postgres
