package com.acme.payments.grpc;

import com.acme.payments.v1.AuthorizePaymentRequest;
import com.acme.payments.v1.GetPaymentRequest;
import com.acme.payments.v1.Payment;
import com.acme.payments.v1.PaymentServiceGrpc;
import com.acme.payments.web.PaymentRepository;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import org.springframework.stereotype.Component;

/** The PaymentService gRPC API, on top of the same repository the REST controller reads. */
@Component
public class PaymentGrpcService extends PaymentServiceGrpc.PaymentServiceImplBase {
    private final PaymentRepository payments;

    public PaymentGrpcService(PaymentRepository payments) {
        this.payments = payments;
    }

    @Override
    public void authorizePayment(AuthorizePaymentRequest request, StreamObserver<Payment> observer) {
        Payment payment = payments.authorize(request.getOrderId(), request.getAmount());
        observer.onNext(payment);
        observer.onCompleted();
    }

    @Override
    public void getPayment(GetPaymentRequest request, StreamObserver<Payment> observer) {
        payments.find(request.getOrderId()).ifPresentOrElse(
                payment -> {
                    observer.onNext(payment);
                    observer.onCompleted();
                },
                () -> observer.onError(Status.NOT_FOUND.asRuntimeException()));
    }
}
