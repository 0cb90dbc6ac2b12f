//! The AWS SQS and SNS messages the extractors find, one table for the languages whose tests
//! were the same function over and over: each case is a file, its extractor and the events it
//! must yield, so a new SDK idiom is a row and every row is checked the same way.

use super::test_support::{Extract, events, lit, reference};
use super::{go, java, kotlin, php, python, ruby};
use crate::index::facts::{EventRole, Value};
use EventRole::*;

/// One file that sends or receives through AWS, and the events its extractor must find.
struct Case {
    /// Language and idiom, named in a failure.
    name: &'static str,
    extract: Extract,
    path: &'static str,
    src: &'static str,
    /// Each event as (role, queue or topic, library, line).
    want: Vec<(EventRole, Value, &'static str, u32)>,
}

/// The cases, one a language and SDK.
fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "python: boto3 SQS and SNS clients",
            extract: python::extract,
            path: "app.py",
            src: r#"import os
import boto3

sqs = boto3.client("sqs")
QUEUE_URL = os.environ.get("ORDERS_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/1/orders")

def publish(order):
    sqs.send_message(QueueUrl=QUEUE_URL, MessageBody=order)
    boto3.client("sns").publish(TopicArn="arn:aws:sns:us-east-1:1:order-events", Message="m")
    sqs.receive_message(QueueUrl="http://localhost:4566/000000000000/inbox", MaxNumberOfMessages=1)
    queue.send_message(MessageBody="x")
    bus.publish("not-aws", payload)
"#,
            want: vec![
                // The constant is resolved by the graph (its URL names the queue there).
                (Producer, reference("QUEUE_URL"), "SQS", 8),
                (Producer, lit("order-events"), "SNS", 9),
                (Consumer, lit("inbox"), "SQS", 10),
                // A queue resource: the queue is named where it was looked up.
                (Producer, Value::dynamic(), "SQS", 11),
            ],
        },
        Case {
            name: "ruby: aws-sdk SQS and SNS",
            extract: ruby::extract,
            path: "publisher.rb",
            src: r#"require "aws-sdk-sqs"
class Publisher
  def publish(order)
    sqs.send_message(queue_url: "https://sqs.us-east-1.amazonaws.com/1/orders", message_body: order.to_json)
    sns.publish(topic_arn: ENV.fetch("EVENTS_TOPIC_ARN", "arn:aws:sns:us-east-1:1:order-events"), message: "m")
    sqs.receive_message(queue_url: ENV["INBOX_URL"])
    bus.publish("not-aws", order)
  end
end
"#,
            want: vec![
                (Producer, lit("orders"), "SQS", 4),
                (
                    Producer,
                    Value::env("EVENTS_TOPIC_ARN", Some("order-events".into())),
                    "SNS",
                    5,
                ),
                (Consumer, Value::env("INBOX_URL", None), "SQS", 6),
            ],
        },
        Case {
            name: "php: aws-sdk-php SQS and SNS",
            extract: php::extract,
            path: "Publisher.php",
            src: r#"<?php
class Publisher {
    public function publish($order) {
        $this->sqs->sendMessage([
            'QueueUrl' => 'https://sqs.us-east-1.amazonaws.com/1/orders',
            'MessageBody' => json_encode($order),
        ]);
        $this->sns->publish(['TopicArn' => getenv('EVENTS_TOPIC_ARN'), 'Message' => 'm']);
        $this->sqs->receiveMessage(["QueueUrl" => "http://localhost:4566/000000000000/inbox"]);
        $this->bus->publish('not-aws', $order);
    }
}
"#,
            want: vec![
                (Producer, lit("orders"), "SQS", 5),
                (Producer, Value::env("EVENTS_TOPIC_ARN", None), "SNS", 8),
                (Consumer, lit("inbox"), "SQS", 9),
            ],
        },
        Case {
            name: "go: aws-sdk-go-v2 SQS and SNS inputs",
            extract: go::extract,
            path: "aws.go",
            src: r#"package orders

func publish(ctx context.Context, c *sqs.Client, n *sns.Client, queueURL string) {
	c.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:    aws.String("https://sqs.us-east-1.amazonaws.com/123456789012/orders"),
		MessageBody: aws.String("x"),
	})
	c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: &body})
	c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(os.Getenv("PAYMENTS_QUEUE_URL"))})
	n.Publish(ctx, &sns.PublishInput{TopicArn: aws.String("arn:aws:sns:us-east-1:1:order-events")})
	out, _ := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String("http://localhost:4566/000000000000/inbox")})
	other := &kinesis.PutRecordInput{StreamName: aws.String("s")}
}
"#,
            want: vec![
                (Producer, lit("orders"), "SQS", 5),
                // A parameter: kept, so the graph lists the site as unresolved.
                (Producer, Value::dynamic(), "SQS", 8),
                (Producer, Value::env("PAYMENTS_QUEUE_URL", None), "SQS", 9),
                (Producer, lit("order-events"), "SNS", 10),
                (Consumer, lit("inbox"), "SQS", 11),
            ],
        },
        Case {
            name: "java: Spring Cloud AWS templates and the SDK clients",
            extract: java::extract,
            path: "Publisher.java",
            src: r#"package com.acme;
public class Publisher {
    private final SqsOperations template;
    private final SqsClient sqs;
    private final AmazonSNS notifications;
    private final String queue;
    Publisher(String queue) { this.queue = queue; }

    void publish(Order o) {
        template.send(to -> {
            to
              .queue("orders-queue")
              .payload(o);
        });
        template.send(queue, o);
        template.send(o);
        sqs.sendMessage(SendMessageRequest.builder()
            .queueUrl("https://sqs.us-east-1.amazonaws.com/123456789012/payments")
            .messageBody("x").build());
        sqs.sendMessage(b -> b.queueUrl(queue).messageBody("x"));
        sqsClient.sendMessage("http://localhost:4566/000000000000/audit", "body");
        amazonSqs.sendMessage(new SendMessageRequest("https://sqs.eu-west-1.amazonaws.com/1/refunds", "b"));
        notifications.publish(PublishRequest.builder().topicArn("arn:aws:sns:us-east-1:1:order-events").message("m").build());
        snsTemplate.sendNotification("shipments", o, "subject");
        queueMessagingTemplate.convertAndSend("legacy-queue", o);
        eventPublisher.publish(o);
        chat.sendMessage("hello", user);
        template.receive(from -> from.queue("replies"));
        sqs.receiveMessage(ReceiveMessageRequest.builder().queueUrl("https://sqs.us-east-1.amazonaws.com/1/inbox").build());
    }
}
"#,
            want: vec![
                (Producer, lit("orders-queue"), "SqsTemplate", 10),
                // A field set from a constructor parameter: what `new Publisher(…)` passes.
                (Producer, reference("new Publisher#0"), "SqsTemplate", 15),
                (Producer, lit("payments"), "SQS", 17),
                (Producer, reference("new Publisher#0"), "SQS", 20),
                (Producer, lit("audit"), "SQS", 21),
                (Producer, lit("refunds"), "SQS", 22),
                (Producer, lit("order-events"), "SNS", 23),
                (Producer, lit("shipments"), "SNS", 24),
                (Producer, lit("legacy-queue"), "SqsTemplate", 25),
                (Consumer, lit("replies"), "SqsTemplate", 28),
                (Consumer, lit("inbox"), "SQS", 29),
            ],
        },
        Case {
            name: "kotlin: SqsTemplate and SnsClient lambdas",
            extract: kotlin::extract,
            path: "Publisher.kt",
            src: r#"package com.acme
class Publisher(private val sqsTemplate: SqsTemplate, private val sns: SnsClient) {
    fun publish(o: Order) {
        sqsTemplate.send { to -> to.queue("orders-queue").payload(o) }
        sqsTemplate.send("orders-queue", o)
        sns.publish { it.topicArn("arn:aws:sns:us-east-1:1:order-events").message("m") }
        publisher.publish(o)
    }
}
"#,
            want: vec![
                (Producer, lit("orders-queue"), "SqsTemplate", 4),
                (Producer, lit("orders-queue"), "SqsTemplate", 5),
                (Producer, lit("order-events"), "SNS", 6),
            ],
        },
    ]
}

/// Every case yields exactly its events, in order.
#[test]
fn each_case_yields_its_events() {
    for c in cases() {
        let f = (c.extract)(c.path, c.src);
        assert_eq!(events(&f), c.want, "case {}", c.name);
    }
}
