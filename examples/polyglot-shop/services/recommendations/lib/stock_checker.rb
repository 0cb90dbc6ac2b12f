require "net/http"
require "json"

module Recommendations
  # Asks the inventory service's HTTP API whether a SKU is in stock.
  class StockChecker
    def initialize(base_url)
      @base_url = base_url
    end

    def in_stock?(sku)
      response = Net::HTTP.get_response(URI("#{@base_url}/stock/#{sku}"))
      response.is_a?(Net::HTTPSuccess) && JSON.parse(response.body)["available"].to_i.positive?
    end
  end
end
