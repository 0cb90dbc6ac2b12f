module Recommendations
  # Counts which SKUs were bought together; recommends the most frequent partners.
  class Recommender
    def initialize
      @pairs = Hash.new { |h, k| h[k] = Hash.new(0) }
      @history = Hash.new { |h, k| h[k] = [] }
    end

    # Learns from one order: every pair of SKUs in it was bought together.
    def learn(customer_id, skus)
      @history[customer_id].concat(skus)
      skus.combination(2).each do |a, b|
        @pairs[a][b] += 1
        @pairs[b][a] += 1
      end
    end

    def top_for(customer_id, limit = 3)
      scores = Hash.new(0)
      @history[customer_id].each do |sku|
        @pairs[sku].each { |other, n| scores[other] += n }
      end
      scores.sort_by { |_, n| -n }.first(limit).map(&:first)
    end
  end
end
