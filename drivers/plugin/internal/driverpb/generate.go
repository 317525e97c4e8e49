// Package driverpb is the generated gRPC code of the driver plugin protocol
// (driver.proto). Do not edit the .pb.go files: change driver.proto and run make generate.
package driverpb

//go:generate sh ./generate.sh
