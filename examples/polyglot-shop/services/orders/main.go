// Command orders serves the OrderService gRPC API and publishes order events to Kafka.
package main

import (
	"log"
	"net"
	"net/http"
	"os"

	"github.com/segmentio/kafka-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/acme/shop/orders/gen/orderspb"
	pricingpb "github.com/acme/shop/orders/gen/pricingpb"
)

// ordersTopic is where new orders are announced; overridable for staging clusters.
var ordersTopic = getenv("ORDERS_TOPIC", "orders.created")

func getenv(key, fallback string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return fallback
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusOK)
}

func main() {
	pricingAddr := getenv("PRICING_ADDR", "pricing:50051")
	conn, err := grpc.NewClient(pricingAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatalf("dial pricing: %v", err)
	}
	defer conn.Close()
	pricing := pricingpb.NewPricingServiceClient(conn)

	brokers := getenv("KAFKA_BROKERS", "kafka:9092")
	writer := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: ordersTopic, Balancer: &kafka.Hash{}}
	defer writer.Close()

	lis, err := net.Listen("tcp", ":50051")
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	server := grpc.NewServer()
	pb.RegisterOrderServiceServer(server, &orderServer{pricing: pricing, events: writer, store: newStore()})

	http.HandleFunc("/healthz", healthz)
	go func() { log.Println(http.ListenAndServe(":8080", nil)) }()

	log.Printf("orders listening on %s", lis.Addr())
	if err := server.Serve(lis); err != nil {
		log.Fatalf("serve: %v", err)
	}
}
