require "kafka"
require "json"
require_relative "recommender"

module Recommendations
  # Feeds every new order into the recommender (ruby-kafka consumer group).
  class OrderEvents
    def initialize(recommender, brokers: ENV.fetch("KAFKA_BROKERS", "kafka:9092").split(","))
      @recommender = recommender
      @kafka = Kafka.new(brokers, client_id: "recommendations")
    end

    def run
      consumer = @kafka.consumer(group_id: "recommendations")
      consumer.subscribe("orders.created")
      consumer.each_message do |message|
        order = JSON.parse(message.value)
        @recommender.learn(order["customer_id"], order.fetch("items", []).map { |i| i["sku"] })
      end
    end
  end
end
