package main

import (
	"fmt"
	"sync"

	pb "github.com/acme/shop/orders/gen/orderspb"
)

// orderStore keeps orders in memory; good enough for the example.
type orderStore struct {
	mu     sync.RWMutex
	orders map[string]*pb.Order
	nextID int
}

func newStore() *orderStore {
	return &orderStore{orders: make(map[string]*pb.Order)}
}

func (st *orderStore) add(customer string, items []*pb.LineItem, total int64, currency string) *pb.Order {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.nextID++
	order := &pb.Order{
		Id:         fmt.Sprintf("ord-%06d", st.nextID),
		CustomerId: customer,
		Items:      items,
		Status:     pb.OrderStatus_ORDER_STATUS_PENDING,
		TotalCents: total,
		Currency:   currency,
	}
	st.orders[order.Id] = order
	return order
}

func (st *orderStore) get(id string) (*pb.Order, bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	order, ok := st.orders[id]
	return order, ok
}
