# Recommendations over HTTP (Sinatra): "customers who bought this also bought".
require "sinatra/base"
require "json"
require_relative "lib/recommender"
require_relative "lib/stock_checker"

class RecommendationsApp < Sinatra::Base
  RECOMMENDER = Recommendations::Recommender.new
  STOCK = Recommendations::StockChecker.new(ENV.fetch("INVENTORY_URL", "http://inventory:8000"))

  get "/recommendations/:user_id" do
    content_type :json
    skus = RECOMMENDER.top_for(params[:user_id]).select { |sku| STOCK.in_stock?(sku) }
    { user_id: params[:user_id], skus: skus }.to_json
  end
end
