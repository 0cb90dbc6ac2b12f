module github.com/acme/shop/orders

go 1.22

require (
	github.com/segmentio/kafka-go v0.4.47
	google.golang.org/grpc v1.64.0
	google.golang.org/protobuf v1.34.1
)
