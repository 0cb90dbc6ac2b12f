package main

import (
	"context"
	"net"
	"testing"

	"github.com/segmentio/kafka-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/acme/shop/orders/gen/orderspb"
)

// TestGetOrderOverTheWire calls the real server through a client: test code, which mesh-mcp
// leaves out of gRPC and impact answers unless include_tests is set.
func TestGetOrderOverTheWire(t *testing.T) {
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	server := grpc.NewServer()
	pb.RegisterOrderServiceServer(server, &orderServer{store: newStore()})
	go server.Serve(lis)
	defer server.Stop()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	client := pb.NewOrderServiceClient(conn)
	if _, err := client.GetOrder(context.Background(), &pb.GetOrderRequest{Id: "missing"}); err == nil {
		t.Fatal("expected NotFound for an unknown order")
	}
}

func TestPublishFixtureEvent(t *testing.T) {
	w := &kafka.Writer{Addr: kafka.TCP("localhost:9092"), Topic: "orders.created"}
	defer w.Close()
	_ = w.WriteMessages(context.Background(), kafka.Message{Value: []byte(`{"id":"ord-test"}`)})
}
