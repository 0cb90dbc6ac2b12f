package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/segmentio/kafka-go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/acme/shop/orders/gen/orderspb"
	pricingpb "github.com/acme/shop/orders/gen/pricingpb"
)

// orderServer implements pb.OrderServiceServer.
type orderServer struct {
	pb.UnimplementedOrderServiceServer
	pricing pricingpb.PricingServiceClient
	events  *kafka.Writer
	store   *orderStore
}

// CreateOrder prices every line, stores the order and announces it on the orders topic.
func (s *orderServer) CreateOrder(ctx context.Context, req *pb.CreateOrderRequest) (*pb.CreateOrderResponse, error) {
	var total int64
	for _, item := range req.GetItems() {
		quote, err := s.pricing.GetQuote(ctx, &pricingpb.QuoteRequest{Sku: item.GetSku(), Quantity: item.GetQuantity(), Currency: req.GetCurrency()})
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "pricing %s: %v", item.GetSku(), err)
		}
		total += quote.GetTotal().GetAmountMinor()
	}
	order := s.store.add(req.GetCustomerId(), req.GetItems(), total, req.GetCurrency())
	payload, err := json.Marshal(order)
	if err != nil {
		return nil, fmt.Errorf("encode order event: %w", err)
	}
	if err := s.events.WriteMessages(ctx, kafka.Message{Key: []byte(order.GetId()), Value: payload}); err != nil {
		return nil, status.Errorf(codes.Internal, "publish order event: %v", err)
	}
	return &pb.CreateOrderResponse{Order: order}, nil
}

// GetOrder returns one stored order.
func (s *orderServer) GetOrder(_ context.Context, req *pb.GetOrderRequest) (*pb.Order, error) {
	order, ok := s.store.get(req.GetId())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "order %q not found", req.GetId())
	}
	return order, nil
}
